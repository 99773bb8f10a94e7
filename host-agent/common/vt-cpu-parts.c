#include "common/vt-cpu-parts.h"

#include <time.h>

#include "common/vt-names.h"

static const char *const part_names[] = {
  [VT_CPU_PART_HEAT] = "heat",
  [VT_CPU_PART_RESIDENCY] = "residency",
  [VT_CPU_PART_NUMA_MAPS] = "numa-maps",
  [VT_CPU_PART_PLANNING] = "planning",
};

static guint64 part_ns[VT_CPU_PARTS];
/* What the scopes nested in the innermost open one took so far. */
static __thread guint64 nested_ns;

const char *
vt_cpu_part_name (VtCpuPart part)
{
  return VT_NAME_LOOKUP (part_names, part);
}

guint64
vt_cpu_thread_ns (void)
{
  struct timespec ts;
  if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

double
vt_cpu_part_seconds (VtCpuPart part)
{
  g_return_val_if_fail (part < VT_CPU_PARTS, 0);
  return (double) __atomic_load_n (&part_ns[part], __ATOMIC_RELAXED) / 1e9;
}

VtCpuScope
vt_cpu_scope_begin (VtCpuPart part)
{
  VtCpuScope scope = { part, vt_cpu_thread_ns (), nested_ns };
  nested_ns = 0;
  return scope;
}

void
vt_cpu_scope_end (VtCpuScope *scope)
{
  guint64 took = vt_cpu_thread_ns () - scope->start_ns;
  guint64 own = took > nested_ns ? took - nested_ns : 0;
  if (scope->part < VT_CPU_PARTS)
    __atomic_fetch_add (&part_ns[scope->part], own, __ATOMIC_RELAXED);
  nested_ns = scope->outer_nested_ns + took;
}
