/* QEMU's own memory: /proc/PID/maps for its ranges, pagemap (in bulk) for
 * the pages it holds there. */
#include "access/vt-qemu-pages.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-pagemap.h"
#include "common/vt-process.h"
#include "common/vt-sysfs.h"

/* Mappings closer than this are watched as one range: DAMON samples the
 * gap too, and finds nothing used there. */
#define JOIN_GAP (G_GUINT64_CONSTANT (2) << 20)
/* ... and never across more than this, however many ranges are left: a
 * range is read whole (pagemap) when its pages are counted. */
#define MAX_GAP (G_GUINT64_CONSTANT (1) << 30)
/* pagemap entries read at once */
#define PAGEMAP_CHUNK 4096

struct _VtQemuPages {
  GPid pid;
  guint64 page_size;
  int pagemap_fd;
  char *pagemap_path; /* for errors */
};

/* ---- its ranges ---- */

/* Kernel objects QEMU maps (KVM's vCPU pages, VFIO regions, the vDSO):
 * not memory a node holds for it. */
static gboolean
kernel_object (const char *path)
{
  static const char *const prefixes[] = { "anon_inode:", "/dev/", "[vdso]", "[vvar",
                                          "[vsyscall]", "[uprobes]" };
  for (guint i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (g_str_has_prefix (path, prefixes[i]))
      return TRUE;
  return FALSE;
}

/* A /proc/PID/maps line's range when it is one of QEMU's private
 * mappings that may hold its own memory. */
static gboolean
own_mapping (const char *line, guint64 *start, guint64 *end)
{
  char perms[5] = "";
  int path_at = -1;
  /* start-end perms offset dev inode [path] */
  if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %4s %*s %*s %*s %n", start, end, perms,
              &path_at) < 3 ||
      path_at < 0 || strlen (perms) < 4)
    return FALSE;
  return *end > *start && perms[3] == 'p' && (perms[0] == 'r' || perms[1] == 'w') &&
         !kernel_object (line + path_at);
}

/* [start, end) less the RAM and a page around each of its ranges, onto `out`. */
static void
add_outside (GArray *out, guint64 start, guint64 end, const VtAddrRange *ram, guint n,
             guint64 page)
{
  guint64 at = start;
  for (guint x = 0; x < n && at < end; x++) {
    guint64 lo = ram[x].start > page ? ram[x].start - page : 0, hi = ram[x].end + page;
    if (hi <= at || lo >= end)
      continue;
    if (lo > at) {
      VtAddrRange r = { at, lo };
      g_array_append_val (out, r);
    }
    at = MAX (at, hi);
  }
  if (at < end) {
    VtAddrRange r = { at, end };
    g_array_append_val (out, r);
  }
}

/* Joins neighbours across gaps up to JOIN_GAP (never across the RAM:
 * a RAM range lies in no gap joined), then the nearest ones until at
 * most `max` are left, none across more than MAX_GAP. */
static void
join_ranges (GArray *ranges, const VtAddrRange *ram, guint n, guint max)
{
  for (;;) {
    guint best = G_MAXUINT;
    guint64 best_gap = G_MAXUINT64;
    for (guint i = 0; i + 1 < ranges->len; i++) {
      const VtAddrRange *a = &g_array_index (ranges, VtAddrRange, i), *b = a + 1;
      gboolean across_ram = FALSE;
      for (guint x = 0; x < n && !across_ram; x++)
        across_ram = ram[x].start < b->start && ram[x].end > a->end;
      guint64 gap = b->start - a->end;
      if (!across_ram && gap < best_gap)
        best = i, best_gap = gap;
    }
    if (best == G_MAXUINT || (best_gap > JOIN_GAP && ranges->len <= max) || best_gap > MAX_GAP)
      return;
    g_array_index (ranges, VtAddrRange, best).end = g_array_index (ranges, VtAddrRange, best + 1).end;
    g_array_remove_index (ranges, best + 1);
  }
}

/* Its own mappings outside `ram` (and a page around it), sorted, not joined. */
static GArray *
own_mappings (GPid pid, const VtAddrRange *ram, guint n, GError **error)
{
  g_autofree char *maps = vt_process_read_file (pid, "maps", error);
  if (!maps)
    return NULL;
  guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (VtAddrRange));
  g_auto (GStrv) lines = g_strsplit (maps, "\n", -1);
  for (guint l = 0; lines[l]; l++) {
    guint64 start, end;
    if (own_mapping (lines[l], &start, &end))
      add_outside (out, start, end, ram, n, page);
  }
  g_array_sort (out, vt_addr_range_compare);
  return out;
}

GArray *
vt_qemu_pages_ranges (GPid pid, const VtAddrRange *ram, guint n, GError **error)
{
  GArray *out = own_mappings (pid, ram, n, error);
  if (out)
    join_ranges (out, ram, n, VT_QEMU_PAGES_MAX_RANGES);
  return out;
}

/* ---- its pages ---- */

VtQemuPages *
vt_qemu_pages_new (GPid pid, GError **error)
{
  g_autofree char *path = g_strdup_printf ("proc/%d/pagemap", (int) pid);
  g_autofree char *full = vt_sysfs_path (path);
  int fd = open (full, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    g_set_error (error, VT_ERROR, e == ENOENT || e == ESRCH ? VT_ERROR_GONE : VT_ERROR_FAILED,
                 "opening %s: %s", full, g_strerror (e));
    return NULL;
  }
  VtQemuPages *pages = g_new0 (VtQemuPages, 1);
  pages->pid = pid;
  pages->page_size = (guint64) sysconf (_SC_PAGESIZE);
  pages->pagemap_fd = fd;
  pages->pagemap_path = g_steal_pointer (&full);
  return pages;
}

void
vt_qemu_pages_free (VtQemuPages *pages)
{
  if (!pages)
    return;
  close (pages->pagemap_fd);
  g_free (pages->pagemap_path);
  g_free (pages);
}

/* The pages present and QEMU's alone in [start, end), onto `out`. */
static gboolean
list_range (VtQemuPages *pages, guint64 start, guint64 end, GArray *out, GError **error)
{
  guint64 entries[PAGEMAP_CHUNK];
  for (guint64 vpage = start / pages->page_size, last = end / pages->page_size; vpage < last;) {
    gsize want = (gsize) MIN ((guint64) PAGEMAP_CHUNK, last - vpage);
    gssize got = vt_pagemap_pread (pages->pagemap_fd, vpage, entries, want);
    if (got <= 0) {
      g_propagate_error (error, vt_pagemap_read_error (pages->pid, pages->pagemap_path,
                                                       vpage * pages->page_size,
                                                       got < 0 ? errno : 0));
      return FALSE;
    }
    for (gssize i = 0; i < got; i++) {
      guint64 e = entries[i];
      if ((e & VT_PM_PRESENT) && (e & VT_PM_EXCLUSIVE) && !(e & VT_PM_SWAP)) {
        guint64 addr = (vpage + (guint64) i) * pages->page_size;
        g_array_append_val (out, addr);
      }
    }
    vpage += (guint64) got;
  }
  return TRUE;
}

GArray *
vt_qemu_pages_list (VtQemuPages *pages, const VtAddrRange *ranges, guint n, GError **error)
{
  /* Its own mappings now, within the ranges: the gaps the ranges span
   * (up to 1 GiB each) are not read. */
  g_autoptr (GArray) mappings = own_mappings (pages->pid, NULL, 0, error);
  if (!mappings)
    return NULL;
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint m = 0, r = 0; m < mappings->len; m++) {
    const VtAddrRange *map = &g_array_index (mappings, VtAddrRange, m);
    while (r < n && ranges[r].end <= map->start)
      r++;
    for (guint k = r; k < n && ranges[k].start < map->end; k++) {
      guint64 lo = MAX (map->start, ranges[k].start), hi = MIN (map->end, ranges[k].end);
      if (lo < hi && !list_range (pages, lo, hi, out, error))
        return NULL;
    }
  }
  return g_steal_pointer (&out);
}
