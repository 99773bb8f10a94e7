#include "common/vt-pagemap.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-names.h"
#include "common/vt-sysfs.h"

#define KPAGEFLAGS "proc/kpageflags"
#define PIECE_PAGES 512 /* 2 MiB of 4 KiB pages: a PMD */

gssize
vt_pagemap_pread (int fd, guint64 index, guint64 *items, gsize n)
{
  gsize want = n * sizeof *items, got = 0;
  while (got < want) {
    ssize_t r = pread (fd, (char *) items + got, want - got,
                       (off_t) (index * sizeof *items + got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0)
      break;
    got += (gsize) r;
  }
  return (gssize) (got / sizeof *items);
}

GError *
vt_pagemap_read_error (GPid pid, const char *path, guint64 addr, int e)
{
  if (e == 0 || e == ESRCH || e == EIO)
    return g_error_new (VT_ERROR, VT_ERROR_GONE,
                        "process %d is gone (reading address 0x%" G_GINT64_MODIFIER "x in %s: %s)",
                        (int) pid, addr, path, e ? g_strerror (e) : "end of file");
  return g_error_new (VT_ERROR, VT_ERROR_FAILED,
                      "%s: reading the entry of address 0x%" G_GINT64_MODIFIER "x of process %d: %s",
                      path, addr, (int) pid, g_strerror (e));
}

static const char *const class_names[] = {
  [VT_PAGE_CLASS_4K] = "4k",
  [VT_PAGE_CLASS_2M_THP] = "2m-thp",
  [VT_PAGE_CLASS_2M_HUGETLB] = "2m-hugetlb",
  [VT_PAGE_CLASS_1G_HUGETLB] = "1g-hugetlb",
  [VT_PAGE_CLASS_UNKNOWN] = "unknown",
};

const char *
vt_page_class_name (VtPageClass page_class)
{
  return VT_NAME_LOOKUP (class_names, page_class);
}

VtPageClass
vt_page_class_dominant (const guint64 *per_class)
{
  VtPageClass best = VT_PAGE_CLASS_UNKNOWN;
  for (guint c = 0; c < VT_PAGE_CLASSES; c++)
    if (per_class[c] > 0 && (best == VT_PAGE_CLASS_UNKNOWN || per_class[c] > per_class[best]))
      best = c;
  return best;
}

struct _VtPageFlags {
  int fd;
};

VtPageFlags *
vt_page_flags_open (GError **error)
{
  g_autofree char *path = vt_sysfs_path (KPAGEFLAGS);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED, "no page flags: %s: %s", path,
                 g_strerror (e));
    return NULL;
  }
  VtPageFlags *flags = g_new (VtPageFlags, 1);
  flags->fd = fd;
  return flags;
}

void
vt_page_flags_close (VtPageFlags *flags)
{
  if (!flags)
    return;
  close (flags->fd);
  g_free (flags);
}

gboolean
vt_page_flags_get (VtPageFlags *flags, guint64 pfn, guint64 *out)
{
  gssize n = vt_pagemap_pread (flags->fd, pfn, out, 1);
  if (n == 0)
    errno = 0;
  return n == 1;
}

/* The PFN the piece's first page would have if one huge page mapped it
 * (G_MAXUINT64: none does). */
static guint64
huge_base (guint64 vpage, const guint64 *entries, guint n)
{
  guint offset = (guint) (vpage % PIECE_PAGES);
  if (n == 0 || offset + n > PIECE_PAGES)
    return G_MAXUINT64;
  guint64 pfn0 = entries[0] & VT_PM_PFN_MASK;
  if (pfn0 < offset || (pfn0 - offset) % PIECE_PAGES)
    return G_MAXUINT64;
  for (guint i = 0; i < n; i++)
    if (!(entries[i] & VT_PM_PRESENT) || (entries[i] & VT_PM_SWAP) ||
        (entries[i] & VT_PM_PFN_MASK) != pfn0 + i)
      return G_MAXUINT64;
  return pfn0 - offset;
}

VtPageClass
vt_page_flags_classify (VtPageFlags *flags, guint64 vpage, const guint64 *entries, guint n)
{
  guint64 base = huge_base (vpage, entries, n), f, next;
  if (base == G_MAXUINT64 || base == 0)
    return VT_PAGE_CLASS_4K; /* PFN 0: hidden, and no huge page starts there */
  if (!vt_page_flags_get (flags, base, &f))
    return VT_PAGE_CLASS_UNKNOWN;
  if (f & VT_KPF_HUGE) {
    /* A 2 MiB-aligned tail, or a head whose folio goes on past 2 MiB. */
    if (f & VT_KPF_COMPOUND_TAIL)
      return VT_PAGE_CLASS_1G_HUGETLB;
    if (!vt_page_flags_get (flags, base + PIECE_PAGES, &next))
      return errno ? VT_PAGE_CLASS_UNKNOWN : VT_PAGE_CLASS_2M_HUGETLB;
    return (next & VT_KPF_HUGE) && (next & VT_KPF_COMPOUND_TAIL) ? VT_PAGE_CLASS_1G_HUGETLB
                                                                 : VT_PAGE_CLASS_2M_HUGETLB;
  }
  if ((f & VT_KPF_THP) && (f & VT_KPF_COMPOUND_HEAD))
    return VT_PAGE_CLASS_2M_THP;
  return VT_PAGE_CLASS_4K;
}
