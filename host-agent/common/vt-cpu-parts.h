/* Where vtierd's main thread spends its CPU, by part of its work: a scope
 * (VT_CPU_PART) adds the thread CPU time it took, less that of the scopes
 * nested in it, so the parts do not overlap and what none of them took is
 * the rest (bus, discovery, metrics). Kept per process: the counters are
 * vtierd's, like its rusage; read by the metrics layer
 * (vtier_main_loop_cpu_seconds_total{part}) and the bench. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  VT_CPU_PART_HEAT,      /* reading access results (DAMON's trace, samplers) into heat */
  VT_CPU_PART_RESIDENCY, /* reading where each VM's pages sit (pagemap), for tiering */
  VT_CPU_PART_NUMA_MAPS, /* each VM's RAM per node for its listing (numa_maps) */
  VT_CPU_PART_PLANNING,  /* a tiering round's shares and plans, and its moves' results */
  VT_CPU_PARTS,
} VtCpuPart;

const char *vt_cpu_part_name (VtCpuPart part);

/* The calling thread's CPU time (user and system), in ns. */
guint64 vt_cpu_thread_ns (void);

/* CPU seconds `part` took so far. */
double vt_cpu_part_seconds (VtCpuPart part);

typedef struct {
  VtCpuPart part;
  guint64 start_ns;
  guint64 outer_nested_ns; /* what the enclosing scope's nested ones took before this one */
} VtCpuScope;

VtCpuScope vt_cpu_scope_begin (VtCpuPart part);
void vt_cpu_scope_end (VtCpuScope *scope);

/* Counts the rest of the enclosing block to `part`. */
#define VT_CPU_PART(part)                                                                    \
  __attribute__ ((cleanup (vt_cpu_scope_end))) G_GNUC_UNUSED VtCpuScope G_PASTE (vt_cpu_scope_, \
                                                                                 __LINE__) =  \
    vt_cpu_scope_begin (part)

G_END_DECLS
