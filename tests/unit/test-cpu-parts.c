/* The main thread's CPU by part: nested scopes count apart, and the parts
 * add up to the time the scopes took, on this machine's own clock. */
#include <glib.h>

#include "common/vt-cpu-parts.h"

/* Burns about `ms` of this thread's CPU. */
static void
burn (guint ms)
{
  guint64 until = vt_cpu_thread_ns () + (guint64) ms * 1000000;
  volatile guint64 x = 0;
  while (vt_cpu_thread_ns () < until)
    for (guint i = 0; i < 10000; i++)
      x += i;
  (void) x; /* read: clang's -Wunused-but-set-variable */
}

static void
planning_with_residency_inside (void)
{
  VT_CPU_PART (VT_CPU_PART_PLANNING);
  burn (20);
  {
    VT_CPU_PART (VT_CPU_PART_RESIDENCY);
    burn (40);
  }
  burn (20);
}

static void
test_nested_parts_apart (void)
{
  double plan0 = vt_cpu_part_seconds (VT_CPU_PART_PLANNING);
  double res0 = vt_cpu_part_seconds (VT_CPU_PART_RESIDENCY);
  double heat0 = vt_cpu_part_seconds (VT_CPU_PART_HEAT);
  guint64 t0 = vt_cpu_thread_ns ();
  planning_with_residency_inside ();
  {
    VT_CPU_PART (VT_CPU_PART_HEAT);
    burn (10);
  }
  double took = (double) (vt_cpu_thread_ns () - t0) / 1e9;
  double plan = vt_cpu_part_seconds (VT_CPU_PART_PLANNING) - plan0;
  double res = vt_cpu_part_seconds (VT_CPU_PART_RESIDENCY) - res0;
  double heat = vt_cpu_part_seconds (VT_CPU_PART_HEAT) - heat0;
  g_test_message ("planning %.4f s, residency %.4f s, heat %.4f s of %.4f s", plan, res, heat, took);
  /* The outer scope's own time only: not the 40 ms nested in it. */
  g_assert_cmpfloat (plan, >=, 0.040);
  g_assert_cmpfloat (plan, <, 0.060);
  g_assert_cmpfloat (res, >=, 0.040);
  g_assert_cmpfloat (res, <, 0.060);
  g_assert_cmpfloat (heat, >=, 0.010);
  /* Disjoint: no more than the thread spent in all. */
  g_assert_cmpfloat (plan + res + heat, <=, took);
}

static void
test_names (void)
{
  g_assert_cmpstr (vt_cpu_part_name (VT_CPU_PART_HEAT), ==, "heat");
  g_assert_cmpstr (vt_cpu_part_name (VT_CPU_PART_RESIDENCY), ==, "residency");
  g_assert_cmpstr (vt_cpu_part_name (VT_CPU_PART_NUMA_MAPS), ==, "numa-maps");
  g_assert_cmpstr (vt_cpu_part_name (VT_CPU_PART_PLANNING), ==, "planning");
  g_assert_cmpstr (vt_cpu_part_name (VT_CPU_PARTS), ==, "unknown");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cpu-parts/nested-parts-apart", test_nested_parts_apart);
  g_test_add_func ("/cpu-parts/names", test_names);
  return g_test_run ();
}
