/* The kernel's files of one u64 per item, as
 * Documentation/admin-guide/mm/pagemap.rst documents them, read the one
 * way both placement and the page samplers need:
 *
 *   /proc/PID/pagemap  one u64 per virtual page: bit 63 present, 62
 *                      swapped, 56 mapped by this process alone, 55
 *                      soft-dirty, bits 0-54 the PFN (0 without
 *                      CAP_SYS_ADMIN).
 *   /proc/kpageflags   one u64 of flags per PFN (root only).
 *
 * And from them, a range's page class: what the kernel moves it in (a
 * 4 KiB page, a THP, a hugetlbfs page), which sets how fast it moves.
 * Paths are under the vt_sysfs root (tests run on fake trees). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define VT_PM_PFN_MASK   ((G_GUINT64_CONSTANT (1) << 55) - 1)
#define VT_PM_SOFT_DIRTY (G_GUINT64_CONSTANT (1) << 55)
/* Since 4.2: the page is mapped once. Its absence on a present page is
 * what makes move_pages(MPOL_MF_MOVE) refuse it with EACCES: a second
 * mapper of the file, a vhost-user back end, a KSM-merged page. */
#define VT_PM_EXCLUSIVE  (G_GUINT64_CONSTANT (1) << 56)
#define VT_PM_SWAP       (G_GUINT64_CONSTANT (1) << 62)
#define VT_PM_PRESENT    (G_GUINT64_CONSTANT (1) << 63)

/* include/uapi/linux/kernel-page-flags.h */
#define VT_KPF_COMPOUND_HEAD (G_GUINT64_CONSTANT (1) << 15)
#define VT_KPF_COMPOUND_TAIL (G_GUINT64_CONSTANT (1) << 16)
#define VT_KPF_HUGE          (G_GUINT64_CONSTANT (1) << 17) /* hugetlbfs */
#define VT_KPF_THP           (G_GUINT64_CONSTANT (1) << 22)
#define VT_KPF_ZERO_PAGE     (G_GUINT64_CONSTANT (1) << 24)

/* Up to `n` items from item `index` on (pagemap: a virtual page number;
 * kpageflags: a PFN) into `items`, EINTR retried. Returns how many were
 * read, fewer at the end of the file (pagemap past the address space, a
 * PFN past the last, an exited process), or -1 with errno. */
gssize vt_pagemap_pread (int fd, guint64 index, guint64 *items, gsize n);

/* The error of a failed read of process `pid`'s pagemap `path` at `addr`,
 * errno `e`: an exited process's reads end early (0: end of file) or fail
 * with ESRCH or EIO, VT_ERROR_GONE; anything else VT_ERROR_FAILED. */
GError *vt_pagemap_read_error (GPid pid, const char *path, guint64 addr, int e);

/* What the kernel maps and moves a page in. */
typedef enum {
  VT_PAGE_CLASS_4K,          /* base pages (or a THP mapped by PTEs) */
  VT_PAGE_CLASS_2M_THP,      /* a transparent huge page mapped whole */
  VT_PAGE_CLASS_2M_HUGETLB,  /* a 2 MiB hugetlbfs page */
  VT_PAGE_CLASS_1G_HUGETLB,  /* a 1 GiB hugetlbfs page */
  VT_PAGE_CLASS_UNKNOWN,     /* no kpageflags to tell (not root, move_pages queries) */
} VtPageClass;
#define VT_PAGE_CLASSES (VT_PAGE_CLASS_UNKNOWN + 1)

/* "4k", "2m-thp", "2m-hugetlb", "1g-hugetlb", "unknown". */
const char *vt_page_class_name (VtPageClass page_class);
/* The class of the most bytes of per_class[VT_PAGE_CLASSES] (the first of
 * a tie); UNKNOWN when all are 0. */
VtPageClass vt_page_class_dominant (const guint64 *per_class);

/* /proc/kpageflags, open. */
typedef struct _VtPageFlags VtPageFlags;

/* VT_ERROR_UNSUPPORTED when it is missing or not ours to read. */
VtPageFlags *vt_page_flags_open (GError **error);
void vt_page_flags_close (VtPageFlags *flags);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtPageFlags, vt_page_flags_close)
/* The flags of `pfn`; FALSE with errno (0: no such PFN). */
gboolean vt_page_flags_get (VtPageFlags *flags, guint64 pfn, guint64 *out);

/* The class of pages [vpage, vpage + n) of one 2 MiB-aligned piece of
 * virtual memory (none past its end), from their pagemap entries: a huge
 * page maps them when they are all present at consecutive PFNs from a
 * 2 MiB-aligned one and kpageflags says THP or hugetlbfs there (a 1 GiB
 * one when its folio reaches past those 2 MiB); else 4 KiB pages, without
 * a read of kpageflags. UNKNOWN when the flags cannot be read. */
VtPageClass vt_page_flags_classify (VtPageFlags *flags, guint64 vpage, const guint64 *entries,
                                    guint n);

G_END_DECLS
