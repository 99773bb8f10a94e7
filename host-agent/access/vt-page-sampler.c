/* Page-level access checks: page_idle and soft-dirty, read through
 * /proc/PID/pagemap. Kernel interfaces, as documented in
 * Documentation/admin-guide/mm/{pagemap,idle_page_tracking,soft-dirty}.rst:
 *
 *   pagemap      one native-endian u64 per virtual page: bit 63 present,
 *                bit 55 soft-dirty, bits 0-54 the PFN (0 without
 *                CAP_SYS_ADMIN).
 *   kpageflags   one u64 of flags per PFN. Needed because page_idle ignores
 *                tail pages since its folio conversion (setting their bit is
 *                a no-op, reading it gives 0, i.e. "accessed"): a page of a
 *                THP is tracked through its folio's head.
 *   page_idle    u64 words, PFN i is bit i%64 of word i/64; whole aligned
 *                words only. A 1 written marks the page idle, a 0 written is
 *                ignored; a 1 read means not accessed since marked.
 *   clear_refs   "4" clears soft-dirty on every page of the process.
 *
 * The check of an interval judges only the pages the prepare before it
 * marked (matched by region index and sampling_addr: the region engine passes
 * the same regions to both); anything else reads as not accessed. */
#include "access/vt-page-sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-pagemap.h"
#include "common/vt-sysfs.h"

#define PM_PFN_MASK   ((G_GUINT64_CONSTANT (1) << 55) - 1)
#define PM_SOFT_DIRTY (G_GUINT64_CONSTANT (1) << 55)
#define PM_PRESENT    (G_GUINT64_CONSTANT (1) << 63)

/* include/uapi/linux/kernel-page-flags.h */
#define KPF_COMPOUND_HEAD (G_GUINT64_CONSTANT (1) << 15)
#define KPF_COMPOUND_TAIL (G_GUINT64_CONSTANT (1) << 16)
#define KPF_HUGE          (G_GUINT64_CONSTANT (1) << 17) /* hugetlbfs */
#define KPF_ZERO_PAGE     (G_GUINT64_CONSTANT (1) << 24)

/* Largest folio whose head is looked for: a PUD-sized THP (1 GiB of 4 KiB). */
#define MAX_FOLIO_ORDER 18

#define PAGE_IDLE_BITMAP "sys/kernel/mm/page_idle/bitmap"
#define KPAGEFLAGS       "proc/kpageflags"
#define BITS_PER_WORD    64

typedef struct {
  guint64 addr;     /* the sampling page the last prepare was given */
  guint64 pfn;      /* idle: what pagemap said then (0: not present) */
  guint64 idle_pfn; /* idle: the PFN page_idle tracks it by (its folio's head) */
  gboolean marked;  /* prepared: idle bit set / soft-dirty cleared */
} MarkedPage;

typedef struct {
  guint64 pfn;  /* in the page_idle bitmap */
  guint region; /* index into the regions passed */
} BitmapSlot;

struct _VtPageSampler {
  VtPageCheck check;
  GPid pid;
  guint64 page_size;
  int pagemap_fd;
  int kpageflags_fd; /* idle only */
  int bitmap_fd;     /* idle only */
  int clear_refs_fd; /* soft-dirty only */
  char *pagemap_path, *kpageflags_path, *bitmap_path, *clear_refs_path; /* for messages */
  GArray *marked;    /* MarkedPage, one per region of the last prepare */
  GArray *slots;     /* BitmapSlot, scratch */
  GError *error;     /* first failure since the last take_error */
};

const char *
vt_page_check_name (VtPageCheck check)
{
  switch (check) {
  case VT_PAGE_CHECK_IDLE:
    return "page-idle";
  case VT_PAGE_CHECK_SOFT_DIRTY:
    return "soft-dirty";
  }
  return "unknown";
}

/* ---- the kernel's u64 files ---- */

/* One whole u64 at `offset`. FALSE with errno set, or errno 0 at end of
 * file (pagemap of an exited process, a PFN beyond the last). */
static gboolean
pread_u64 (int fd, guint64 offset, guint64 *value)
{
  ssize_t n;
  do
    n = pread (fd, value, sizeof *value, (off_t) offset);
  while (n < 0 && errno == EINTR);
  if (n == (ssize_t) sizeof *value)
    return TRUE;
  if (n >= 0)
    errno = 0;
  return FALSE;
}

static gboolean
pwrite_u64 (int fd, guint64 offset, guint64 value)
{
  ssize_t n;
  do
    n = pwrite (fd, &value, sizeof value, (off_t) offset);
  while (n < 0 && errno == EINTR);
  if (n == (ssize_t) sizeof value)
    return TRUE;
  if (n >= 0)
    errno = EIO;
  return FALSE;
}

/* ---- availability ---- */

/* FALSE with VT_ERROR_UNSUPPORTED when `path` is missing ("<what>: <full
 * path> is missing (<config>)") or not accessible with `mode` (R_OK, W_OK). */
static gboolean
require_file (const char *path, int mode, const char *what, const char *config, GError **error)
{
  g_autofree char *full = vt_sysfs_path (path);
  if (!g_file_test (full, G_FILE_TEST_EXISTS)) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED, "%s: %s is missing (%s)", what, full,
                 config);
    return FALSE;
  }
  if (access (full, mode) != 0) {
    int e = errno;
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED, "%s: %s: %s (vtierd must run as root)",
                 what, full, g_strerror (e));
    return FALSE;
  }
  return TRUE;
}

/* The pagemap entry of a fresh page of our own, from the real
 * /proc/self/pagemap. */
static gboolean
probe_own_page (guint64 *entry, GError **error)
{
  const char *path = "/proc/self/pagemap";
  long page_size = sysconf (_SC_PAGESIZE);
  volatile char *page =
    mmap (NULL, (size_t) page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    int e = errno;
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "probing %s: mmap: %s", path, g_strerror (e));
    return FALSE;
  }
  page[0] = 1; /* fault it in */

  int fd = open (path, O_RDONLY | O_CLOEXEC);
  gboolean ok = fd >= 0 && pread_u64 (fd, (guint64) (uintptr_t) page / (guint64) page_size *
                                              sizeof (guint64), entry);
  int e = errno;
  if (fd >= 0)
    close (fd);
  munmap ((void *) page, (size_t) page_size);
  if (!ok)
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "probing %s: %s", path,
                 e ? g_strerror (e) : "no entry for a fresh page");
  return ok;
}

/* On the host itself, what only the kernel's behaviour shows: a kernel
 * without CONFIG_MEM_SOFT_DIRTY still has clear_refs (and accepts "4"), but
 * a fresh mapping is soft-dirty only with it (new VMAs are); PFNs show only
 * with CAP_SYS_ADMIN. A fake tree (tests) cannot play the kernel for our own
 * pages: there only the files are checked, and a kernel without soft-dirty
 * would be seen only in bit 55 never being set. */
static gboolean
probe_kernel (VtPageCheck check, GError **error)
{
  guint64 entry;
  if (!g_str_equal (vt_sysfs_root (), "/"))
    return TRUE;
  if (!probe_own_page (&entry, error))
    return FALSE;
  if (check == VT_PAGE_CHECK_IDLE && !(entry & PM_PFN_MASK)) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "no idle page tracking: /proc/self/pagemap shows no PFNs: needs CAP_SYS_ADMIN");
    return FALSE;
  }
  if (check == VT_PAGE_CHECK_SOFT_DIRTY && !(entry & PM_SOFT_DIRTY)) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "no soft-dirty tracking: a fresh page is not soft-dirty in /proc/self/pagemap "
                 "(CONFIG_MEM_SOFT_DIRTY)");
    return FALSE;
  }
  return TRUE;
}

gboolean
vt_page_sampler_available (VtPageCheck check, GError **error)
{
  if (!require_file ("proc/self/pagemap", R_OK, "no pagemap", "CONFIG_PROC_PAGE_MONITOR", error))
    return FALSE;
  switch (check) {
  case VT_PAGE_CHECK_IDLE:
    return require_file (PAGE_IDLE_BITMAP, R_OK | W_OK, "no idle page tracking",
                         "CONFIG_IDLE_PAGE_TRACKING", error) &&
           require_file (KPAGEFLAGS, R_OK, "no page flags", "CONFIG_PROC_PAGE_MONITOR", error) &&
           probe_kernel (check, error);
  case VT_PAGE_CHECK_SOFT_DIRTY:
    return require_file ("proc/self/clear_refs", W_OK, "no soft-dirty tracking",
                         "CONFIG_PROC_PAGE_MONITOR", error) &&
           probe_kernel (check, error);
  }
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "unknown page check %d", (int) check);
  return FALSE;
}

/* ---- life cycle ---- */

static GError *
process_gone (GPid pid, const char *what, const char *path, int e)
{
  return g_error_new (VT_ERROR, VT_ERROR_GONE, "process %d is gone (%s %s%s%s)", (int) pid, what,
                      path, e ? ": " : "", e ? g_strerror (e) : "");
}

/* Opens root + `path`; a missing /proc/PID file means the process is gone. */
static gboolean
open_file (VtPageSampler *sampler, const char *path, int flags, int *fd, char **full,
           GError **error)
{
  *full = vt_sysfs_path (path);
  do
    *fd = open (*full, flags | O_CLOEXEC);
  while (*fd < 0 && errno == EINTR);
  if (*fd >= 0)
    return TRUE;

  int e = errno;
  if (g_str_has_prefix (path, "proc/") && (e == ENOENT || e == ESRCH))
    g_propagate_error (error, process_gone (sampler->pid, "opening", *full, e));
  else
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "opening %s for process %d: %s", *full,
                 (int) sampler->pid, g_strerror (e));
  return FALSE;
}

VtPageSampler *
vt_page_sampler_new (VtPageCheck check, GPid pid, GError **error)
{
  if (!vt_page_sampler_available (check, error))
    return NULL;

  g_autofree char *proc_dir = g_strdup_printf ("proc/%d", (int) pid);
  if (!vt_sysfs_exists (proc_dir)) {
    g_autofree char *full = vt_sysfs_path (proc_dir);
    g_set_error (error, VT_ERROR, VT_ERROR_GONE, "process %d is gone (no %s)", (int) pid, full);
    return NULL;
  }

  g_autoptr (VtPageSampler) sampler = g_new0 (VtPageSampler, 1);
  sampler->check = check;
  sampler->pid = pid;
  sampler->page_size = (guint64) sysconf (_SC_PAGESIZE);
  sampler->pagemap_fd = sampler->kpageflags_fd = sampler->bitmap_fd = sampler->clear_refs_fd = -1;
  sampler->marked = g_array_new (FALSE, TRUE, sizeof (MarkedPage));
  sampler->slots = g_array_new (FALSE, FALSE, sizeof (BitmapSlot));

  g_autofree char *pagemap = g_strdup_printf ("%s/pagemap", proc_dir);
  if (!open_file (sampler, pagemap, O_RDONLY, &sampler->pagemap_fd, &sampler->pagemap_path, error))
    return NULL;

  if (check == VT_PAGE_CHECK_IDLE) {
    if (!open_file (sampler, KPAGEFLAGS, O_RDONLY, &sampler->kpageflags_fd,
                    &sampler->kpageflags_path, error) ||
        !open_file (sampler, PAGE_IDLE_BITMAP, O_RDWR, &sampler->bitmap_fd, &sampler->bitmap_path,
                    error))
      return NULL;
  } else {
    g_autofree char *clear_refs = g_strdup_printf ("%s/clear_refs", proc_dir);
    if (!open_file (sampler, clear_refs, O_WRONLY, &sampler->clear_refs_fd,
                    &sampler->clear_refs_path, error))
      return NULL;
  }
  return g_steal_pointer (&sampler);
}

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

void
vt_page_sampler_free (VtPageSampler *sampler)
{
  if (!sampler)
    return;
  close_fd (&sampler->pagemap_fd);
  close_fd (&sampler->kpageflags_fd);
  close_fd (&sampler->bitmap_fd);
  close_fd (&sampler->clear_refs_fd);
  g_free (sampler->pagemap_path);
  g_free (sampler->kpageflags_path);
  g_free (sampler->bitmap_path);
  g_free (sampler->clear_refs_path);
  g_clear_pointer (&sampler->marked, g_array_unref);
  g_clear_pointer (&sampler->slots, g_array_unref);
  g_clear_error (&sampler->error);
  g_free (sampler);
}

GError *
vt_page_sampler_take_error (VtPageSampler *sampler)
{
  return g_steal_pointer (&sampler->error);
}

static void
keep_error (VtPageSampler *sampler, GError *error)
{
  if (!sampler->error)
    sampler->error = error;
  else
    g_error_free (error);
}

/* ---- pagemap and kpageflags ---- */

static gboolean
read_pagemap_entry (VtPageSampler *sampler, guint64 addr, guint64 *entry, GError **error)
{
  if (pread_u64 (sampler->pagemap_fd, addr / sampler->page_size * sizeof (guint64), entry))
    return TRUE;

  g_propagate_error (error, vt_pagemap_read_error (sampler->pid, sampler->pagemap_path, addr,
                                                   errno));
  return FALSE;
}

static gboolean
read_page_flags (VtPageSampler *sampler, guint64 pfn, guint64 addr, guint64 *flags,
                 GError **error)
{
  if (pread_u64 (sampler->kpageflags_fd, pfn * sizeof (guint64), flags))
    return TRUE;
  int e = errno;
  g_set_error (error, VT_ERROR, VT_ERROR_FAILED,
               "%s: reading the flags of PFN 0x%" G_GINT64_MODIFIER
               "x (address 0x%" G_GINT64_MODIFIER "x of process %d): %s",
               sampler->kpageflags_path, pfn, addr, (int) sampler->pid,
               e ? g_strerror (e) : "no such PFN");
  return FALSE;
}

/* ---- idle page tracking ---- */

/* A tail page's folio head. Folios are naturally aligned, so the head is
 * the first head found aligning the PFN down to 2, 4, 8... pages. 0 if
 * none is (the folio was split or freed meanwhile: skip it this time). */
static gboolean
find_folio_head (VtPageSampler *sampler, guint64 pfn, guint64 addr, guint64 *head,
                 GError **error)
{
  guint64 candidate = pfn;
  *head = 0;
  for (guint order = 1; order <= MAX_FOLIO_ORDER; order++) {
    guint64 aligned = pfn & ~((G_GUINT64_CONSTANT (1) << order) - 1);
    if (aligned == candidate)
      continue;
    candidate = aligned;
    guint64 flags;
    if (!read_page_flags (sampler, candidate, addr, &flags, error))
      return FALSE;
    if (flags & KPF_COMPOUND_HEAD) {
      *head = candidate;
      return TRUE;
    }
  }
  return TRUE;
}

/* The PFN page_idle tracks the page at `addr` by, from its pagemap entry;
 * 0 when it cannot be tracked: not present, or the shared zero page. */
static gboolean
idle_pfn_of (VtPageSampler *sampler, guint64 addr, guint64 entry, guint64 *idle_pfn,
             GError **error)
{
  *idle_pfn = 0;
  if (!(entry & PM_PRESENT))
    return TRUE;

  guint64 pfn = entry & PM_PFN_MASK;
  if (pfn == 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "pagemap shows no PFNs: needs CAP_SYS_ADMIN (%s, address 0x%" G_GINT64_MODIFIER
                 "x)",
                 sampler->pagemap_path, addr);
    return FALSE;
  }

  guint64 flags;
  if (!read_page_flags (sampler, pfn, addr, &flags, error))
    return FALSE;
  if (flags & KPF_ZERO_PAGE)
    return TRUE;
  if (flags & KPF_HUGE) {
    /* Not on the LRU: page_idle would report it accessed forever. */
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "page_idle cannot track hugetlbfs pages (process %d, address 0x%" G_GINT64_MODIFIER
                 "x, PFN 0x%" G_GINT64_MODIFIER "x)",
                 (int) sampler->pid, addr, pfn);
    return FALSE;
  }
  if (flags & KPF_COMPOUND_TAIL)
    return find_folio_head (sampler, pfn, addr, idle_pfn, error);
  *idle_pfn = pfn;
  return TRUE;
}

static void
add_slot (VtPageSampler *sampler, guint64 pfn, guint region)
{
  BitmapSlot slot = { pfn, region };
  g_array_append_val (sampler->slots, slot);
}

static gint
compare_slots (gconstpointer a, gconstpointer b)
{
  guint64 x = ((const BitmapSlot *) a)->pfn, y = ((const BitmapSlot *) b)->pfn;
  return x < y ? -1 : x > y;
}

/* The slots from `first` (sorted) that share its bitmap word: returns the
 * index past them, their word's index and their bits. */
static guint
word_group (GArray *slots, guint first, guint64 *word_index, guint64 *bits)
{
  const BitmapSlot *s = (const BitmapSlot *) slots->data;
  guint end = first;
  *word_index = s[first].pfn / BITS_PER_WORD;
  *bits = 0;
  for (; end < slots->len && s[end].pfn / BITS_PER_WORD == *word_index; end++)
    *bits |= G_GUINT64_CONSTANT (1) << (s[end].pfn % BITS_PER_WORD);
  return end;
}

static void
set_bitmap_error (VtPageSampler *sampler, const char *doing, const BitmapSlot *slot,
                  const VtRegion *regions, int e, GError **error)
{
  g_set_error (error, VT_ERROR, VT_ERROR_FAILED,
               "%s: %s the word of PFN 0x%" G_GINT64_MODIFIER "x (address 0x%" G_GINT64_MODIFIER
               "x of process %d): %s",
               sampler->bitmap_path, doing, slot->pfn, regions[slot->region].sampling_addr,
               (int) sampler->pid, e ? g_strerror (e) : "no such PFN");
}

/* One write per word, holding only the slots' bits: the zeros leave the
 * other pages of the word as they are. */
static gboolean
write_idle_bits (VtPageSampler *sampler, const VtRegion *regions, GError **error)
{
  g_array_sort (sampler->slots, compare_slots);
  for (guint i = 0; i < sampler->slots->len;) {
    guint64 word_index, bits;
    guint end = word_group (sampler->slots, i, &word_index, &bits);
    if (!pwrite_u64 (sampler->bitmap_fd, word_index * sizeof (guint64), bits)) {
      set_bitmap_error (sampler, "marking idle", &g_array_index (sampler->slots, BitmapSlot, i),
                        regions, errno, error);
      return FALSE;
    }
    i = end;
  }
  return TRUE;
}

/* One read per word; a bit still set means not accessed. */
static gboolean
read_idle_bits (VtPageSampler *sampler, const VtRegion *regions, gboolean *accessed,
                GError **error)
{
  g_array_sort (sampler->slots, compare_slots);
  for (guint i = 0; i < sampler->slots->len;) {
    guint64 word_index, bits, word;
    guint end = word_group (sampler->slots, i, &word_index, &bits);
    if (!pread_u64 (sampler->bitmap_fd, word_index * sizeof (guint64), &word)) {
      set_bitmap_error (sampler, "reading", &g_array_index (sampler->slots, BitmapSlot, i),
                        regions, errno, error);
      return FALSE;
    }
    for (; i < end; i++) {
      const BitmapSlot *slot = &g_array_index (sampler->slots, BitmapSlot, i);
      accessed[slot->region] = !(word & (G_GUINT64_CONSTANT (1) << (slot->pfn % BITS_PER_WORD)));
    }
  }
  return TRUE;
}

static gboolean
idle_prepare (VtPageSampler *sampler, const VtRegion *regions, guint n, GError **error)
{
  MarkedPage *pages = (MarkedPage *) sampler->marked->data;
  g_array_set_size (sampler->slots, 0);
  for (guint i = 0; i < n; i++) {
    guint64 entry;
    if (!read_pagemap_entry (sampler, pages[i].addr, &entry, error) ||
        !idle_pfn_of (sampler, pages[i].addr, entry, &pages[i].idle_pfn, error))
      return FALSE;
    pages[i].pfn = entry & PM_PRESENT ? entry & PM_PFN_MASK : 0;
    if (pages[i].idle_pfn)
      add_slot (sampler, pages[i].idle_pfn, i);
  }
  if (!write_idle_bits (sampler, regions, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    pages[i].marked = pages[i].idle_pfn != 0;
  return TRUE;
}

static const MarkedPage *
marked_page (VtPageSampler *sampler, guint i, guint64 addr)
{
  if (i >= sampler->marked->len)
    return NULL;
  const MarkedPage *page = &g_array_index (sampler->marked, MarkedPage, i);
  return page->marked && page->addr == addr ? page : NULL;
}

/* pagemap is read again: a page migrated meanwhile (vtierd moves pages)
 * has a new PFN, and its new folio carries the idle flag over. */
static gboolean
idle_check (VtPageSampler *sampler, const VtRegion *regions, guint n, gboolean *accessed,
            GError **error)
{
  g_array_set_size (sampler->slots, 0);
  for (guint i = 0; i < n; i++) {
    guint64 addr = regions[i].sampling_addr, entry;
    const MarkedPage *page = marked_page (sampler, i, addr);
    if (!page)
      continue;
    if (!read_pagemap_entry (sampler, addr, &entry, error))
      return FALSE;
    if (!(entry & PM_PRESENT))
      continue;
    guint64 idle_pfn = page->idle_pfn;
    if ((entry & PM_PFN_MASK) != page->pfn && !idle_pfn_of (sampler, addr, entry, &idle_pfn, error))
      return FALSE;
    if (idle_pfn)
      add_slot (sampler, idle_pfn, i);
  }
  return read_idle_bits (sampler, regions, accessed, error);
}

/* ---- soft-dirty ---- */

static gboolean
clear_soft_dirty (VtPageSampler *sampler, GError **error)
{
  ssize_t n;
  do
    n = write (sampler->clear_refs_fd, "4", 1);
  while (n < 0 && errno == EINTR);
  if (n == 1)
    return TRUE;

  int e = n < 0 ? errno : EIO;
  if (e == ESRCH)
    g_propagate_error (error,
                       process_gone (sampler->pid, "writing 4 to", sampler->clear_refs_path, e));
  else
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "writing '4' to %s (process %d): %s",
                 sampler->clear_refs_path, (int) sampler->pid, g_strerror (e));
  return FALSE;
}

/* clear_refs has no per-page form: one write clears the whole process. */
static gboolean
soft_dirty_prepare (VtPageSampler *sampler, guint n, GError **error)
{
  if (n == 0)
    return TRUE;
  if (!clear_soft_dirty (sampler, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    g_array_index (sampler->marked, MarkedPage, i).marked = TRUE;
  return TRUE;
}

static gboolean
soft_dirty_check (VtPageSampler *sampler, const VtRegion *regions, guint n, gboolean *accessed,
                  GError **error)
{
  for (guint i = 0; i < n; i++) {
    guint64 addr = regions[i].sampling_addr, entry;
    if (!marked_page (sampler, i, addr))
      continue;
    if (!read_pagemap_entry (sampler, addr, &entry, error))
      return FALSE;
    accessed[i] = (entry & PM_PRESENT) && (entry & PM_SOFT_DIRTY);
  }
  return TRUE;
}

/* ---- the primitives ---- */

static void
sampler_prepare (gpointer data, const VtRegion *regions, guint n)
{
  VtPageSampler *sampler = data;
  g_autoptr (GError) error = NULL;

  g_array_set_size (sampler->marked, n);
  for (guint i = 0; i < n; i++) {
    MarkedPage fresh = { .addr = regions[i].sampling_addr };
    g_array_index (sampler->marked, MarkedPage, i) = fresh;
  }

  gboolean ok = sampler->check == VT_PAGE_CHECK_IDLE ? idle_prepare (sampler, regions, n, &error)
                                                     : soft_dirty_prepare (sampler, n, &error);
  if (!ok) {
    /* Nothing reliably marked: the next check judges no page. */
    g_array_set_size (sampler->marked, 0);
    keep_error (sampler, g_steal_pointer (&error));
  }
}

static void
sampler_check (gpointer data, const VtRegion *regions, guint n, gboolean *accessed)
{
  VtPageSampler *sampler = data;
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < n; i++)
    accessed[i] = FALSE;

  gboolean ok = sampler->check == VT_PAGE_CHECK_IDLE
                    ? idle_check (sampler, regions, n, accessed, &error)
                    : soft_dirty_check (sampler, regions, n, accessed, &error);
  if (!ok) {
    for (guint i = 0; i < n; i++)
      accessed[i] = FALSE;
    keep_error (sampler, g_steal_pointer (&error));
  }
}

const VtAccessPrimitives vt_page_sampler_primitives = {
  .prepare = sampler_prepare,
  .check = sampler_check,
};
