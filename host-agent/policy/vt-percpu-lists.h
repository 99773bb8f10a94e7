/* The per-CPU free lists of the host's zones (vm.percpu_pagelist_high_fraction).
 *
 * Since Linux 6.7 each CPU keeps up to its share of its node's low
 * watermark in free pages on a list of its own (on a node with one CPU,
 * the whole low watermark's worth), and a huge page that a demotion frees
 * lands there whole. /proc/meminfo counts those pages free; a huge page's
 * allocation does not: it wants a 2 MiB block in the buddy lists, above
 * the low watermark. So on the top tier a low watermark's worth of free
 * memory takes no promotion: on the testbed (one CPU) 24-29 MiB of node0,
 * where the contended bench's hot sets stopped at 92.9-94.2% (issue 12).
 *
 * Set to a fraction larger than any zone's pages, every zone's lists hold
 * four batches (252 pages at most: under a huge page, and less than the
 * six of kernels before 5.14; 6.7's auto-tuning off), and a freed huge page goes
 * back to the buddy lists. vtierd sets it while it tiers ([tiering]
 * per-cpu-lists = small) and puts back what it found when it stops. A
 * value other than the kernel's default (0) that it did not write is an
 * operator's: it stays. What vtierd found is kept in a state file, so that
 * a vtierd that did not stop cleanly is put right by the next one. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  VT_PERCPU_LISTS_SMALL,  /* four batches a list while vtierd tiers */
  VT_PERCPU_LISTS_KERNEL, /* as the kernel (or the operator) sizes them */
} VtPercpuListsMode;

/* "small", "kernel", NULL-terminated: [tiering] per-cpu-lists' values. */
extern const char *const vt_percpu_lists_mode_names[];

typedef struct _VtPercpuLists VtPercpuLists;

/* The fraction that leaves every zone of /proc/zoneinfo's `zoneinfo` four
 * batches a list: one more than the largest zone's managed pages (at least
 * the kernel's least, 8). 0 when no zone is read. */
guint64 vt_percpu_lists_fraction (const char *zoneinfo);

/* Sets the fraction (vt_sysfs paths: tests use a fake tree) and writes
 * `state_file` first, with what it found. NULL and `error`: the sysctl is
 * missing (VT_ERROR_UNSUPPORTED: a kernel before 5.14), an operator's value
 * is there (VT_ERROR_BUSY), or a read or write failed. */
VtPercpuLists *vt_percpu_lists_hold (const char *state_file, GError **error);
/* The fraction it set, and the one it found. */
guint64 vt_percpu_lists_set_to (const VtPercpuLists *lists);
guint64 vt_percpu_lists_found (const VtPercpuLists *lists);
/* Puts back what it found, unless someone changed the value since, and
 * removes the state file. */
void vt_percpu_lists_release (VtPercpuLists *lists);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtPercpuLists, vt_percpu_lists_release)

G_END_DECLS
