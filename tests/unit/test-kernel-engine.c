/* The kernel engine's byte quota (daemon/vt-kernel-engine.h). */
#include "daemon/vt-kernel-engine.h"

#define MiB (1ull << 20)

/* Far from its goal, a VM gets its part of the rate; near it, what is
 * left, in 8 MiB steps; at or above it, one step (the goal stops it). */
static void
test_quota_bounded_by_the_gap (void)
{
  g_assert_cmpuint (vt_kernel_engine_quota (128 * MiB, 800 * MiB, 100 * MiB), ==, 128 * MiB);
  g_assert_cmpuint (vt_kernel_engine_quota (128 * MiB, 300 * MiB, 290 * MiB), ==, 16 * MiB);
  g_assert_cmpuint (vt_kernel_engine_quota (128 * MiB, 300 * MiB, 292 * MiB), ==, 8 * MiB);
  g_assert_cmpuint (vt_kernel_engine_quota (128 * MiB, 300 * MiB, 400 * MiB), ==, 8 * MiB);
  g_assert_cmpuint (vt_kernel_engine_quota (4 * MiB, 300 * MiB, 0), ==, 4 * MiB);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernel-engine/quota-bounded-by-the-gap", test_quota_bounded_by_the_gap);
  return g_test_run ();
}
