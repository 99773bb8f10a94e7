/* The guest's own view of its memory tiers: NUMA nodes, memory tiers, HMAT
 * figures, demotion and NUMA balancing, read from /sys and /proc (or a copy
 * under another root, for tests) and written as text or as the one-line
 * JSON report of guest-tools/README.md. Plain C11 and libc: vtier-guest
 * ships into guests that have nothing else. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A number the guest does not have: null in JSON, "-" in text. */
#define VG_UNKNOWN (-1LL)

/* One nodeN/accessK/initiators: what initiators of class K see of node N.
 * Latency in nanoseconds, bandwidth in MB/s (numaperf.rst); VG_UNKNOWN
 * where the kernel has no such file. */
typedef struct {
  long long read_latency_ns, write_latency_ns;
  long long read_bandwidth_mbps, write_bandwidth_mbps;
} VgAccess;

typedef struct {
  int node;
  char *cpus;                     /* cpulist as the kernel prints it; "" when CPU-less */
  int tier;                       /* memory tier id; -1 when in none (or no memory_tiering) */
  long long mem_total, mem_free;  /* bytes; VG_UNKNOWN when meminfo cannot be read */
  bool has_access[2];             /* nodeN/access0, access1 (HMAT) are there */
  VgAccess access[2];
} VgNode;

typedef struct {
  int tier;
  int *nodes;
  size_t n_nodes;
} VgTier;

typedef struct {
  char *hostname, *kernel;
  int numa_balancing;    /* 0-3; -1 when the kernel has no NUMA balancing */
  int demotion_enabled;  /* 0 or 1; -1 when the kernel has no such knob */
  VgNode *nodes;         /* sorted by node */
  size_t n_nodes;
  VgTier *tiers;         /* sorted by tier; none without memory_tiering */
  size_t n_tiers;
} VgView;

/* Reads the view under root ("/" for this guest). Files a kernel may lack
 * (memory_tiering, HMAT, demotion, numa_balancing) and an unreadable
 * meminfo are unknowns, not errors. Fails (-1, a message in err naming the
 * path) only when there is no NUMA node at all: no sysfs, or no CONFIG_NUMA.
 * Hostname and kernel release come from proc/sys/kernel/{hostname,osrelease}
 * under root, or uname() when those are not there. */
int vg_view_read (VgView *view, const char *root, char *err, size_t err_size);
void vg_view_clear (VgView *view);

/* "disabled", "normal", "memory-tiering", "normal+memory-tiering" for
 * kernel.numa_balancing 0-3; "unknown" otherwise. */
const char *vg_numa_balancing_mode (int value);

/* For people: a summary, the NODE CPUS TIER MEMORY FREE LATENCY BANDWIDTH
 * table (access0, read/write), the tiers. Ends in a newline; caller frees. */
char *vg_view_format_text (const VgView *view);
/* The report: compact JSON on one line, without the newline; caller frees. */
char *vg_view_format_json (const VgView *view);
